// The errors of an event filter (the events/*/filter files of tracefs), with
// kernel/trace/trace_events_filter.c's texts (its ERRORS table) and the
// position its parse_error records: the caret's column when reading the
// filter file back after a failed write.

/** trace_events_filter.c's err_text, by their FILT_ERR_ names. */
export const FILTER_ERRORS = {
  INVALID_OP: 'Invalid operator',
  TOO_MANY_OPEN: "Too many '('",
  TOO_MANY_CLOSE: "Too few '('",
  MISSING_QUOTE: 'Missing matching quote',
  MISSING_BRACE_OPEN: "Missing '{'",
  MISSING_BRACE_CLOSE: "Missing '}'",
  OPERAND_TOO_LONG: 'Operand too long',
  EXPECT_STRING: 'Expecting string field',
  EXPECT_DIGIT: 'Expecting numeric field',
  ILLEGAL_FIELD_OP: 'Illegal operation for field type',
  FIELD_NOT_FOUND: 'Field not found',
  ILLEGAL_INTVAL: 'Illegal integer value',
  TOO_MANY_PREDS: 'Too many terms in predicate expression',
  INVALID_FILTER: 'Meaningless filter expression',
  INVALID_CPULIST: 'Invalid cpulist',
  INVALID_VALUE: 'Invalid value (did you forget quotes)?',
  NO_FUNCTION: 'Function not found',
  NO_FILTER: 'No filter found',
  /**
   * Not today's table: where Linux fails with a bare -EINVAL and no text
   * (a predicate without a field name), the text older kernels gave it.
   */
  MISSING_FIELD: 'Missing field name and/or value',
} as const

export type FilterErrorCode = keyof typeof FILTER_ERRORS

export class FilterError extends Error {
  constructor(
    readonly code: FilterErrorCode,
    /** Where the caret goes in the filter text (parse_error's position, at most its length). */
    readonly position: number,
    /** What the text does not say: the name at fault, for a message. */
    readonly detail?: string,
  ) {
    super(FILTER_ERRORS[code])
    this.name = 'FilterError'
  }
}
