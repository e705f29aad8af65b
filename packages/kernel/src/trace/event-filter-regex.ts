// A string predicate's pattern, as trace_events_filter.c builds it
// (filter_build_regex): '==' and '!=' compare the whole string; '~' reads
// the pattern with filter_parse_regex, which turns the simple globs into
// cheaper matches ("sh*" a prefix, "*sh" a suffix, "*sh*" a substring, a
// leading '!' inverts the match) and leaves anything else to glob_match
// (lib/glob.c: '*', '?', [classes] with ranges and a leading '!', '\'
// escapes).

/** enum regex_type, as far as filters use it. */
export type MatchType = 'full' | 'front' | 'middle' | 'end' | 'glob'

export interface StringMatch {
  type: MatchType
  /** What is compared: the pattern without the '*'s its type stands for. */
  pattern: string
  /** A leading '!' in a '~' pattern: the predicate is true when the string does not match. */
  not: boolean
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'

/** filter_parse_regex: the type of search a '~' pattern asks for. */
export function parseGlobPattern(text: string): StringMatch {
  let buff = text
  let not = false
  if (buff[0] === '!') {
    not = true
    buff = buff.slice(1)
  }
  // MATCH_INDEX (a pattern starting with a digit) is matched in full.
  if (isDigit(buff[0])) return { type: 'full', pattern: buff, not }
  let type: MatchType = 'full'
  for (let i = 0; i < buff.length; i++) {
    if (buff[i] === '*') {
      if (i === 0) type = 'end'
      else if (i === buff.length - 1) {
        type = type === 'end' ? 'middle' : 'front'
        buff = buff.slice(0, i)
        break
      } else return { type: 'glob', pattern: buff, not }
    } else if ('[?\\'.includes(buff[i])) return { type: 'glob', pattern: buff, not }
  }
  return { type, pattern: buff[0] === '*' ? buff.slice(1) : buff, not }
}

/** lib/glob.c's glob_match: the pattern must match all of str. */
export function globMatch(pat: string, str: string): boolean {
  let p = 0
  let s = 0
  let backPat = -1
  let backStr = 0
  // Past the end a string reads as its NUL, as C's do.
  const at = (t: string, i: number) => (i < t.length ? t.charCodeAt(i) : 0)
  for (;;) {
    const c = at(str, s++)
    let d = at(pat, p++)
    let literal = false
    switch (d) {
      case 0x3f: // '?': anything but the end
        if (c === 0) return false
        break
      case 0x2a: // '*'
        if (at(pat, p) === 0) return true
        backPat = p
        backStr = --s
        break
      case 0x5b: {
        // '[': a class, spans a or a-b, ']' first allowed; unclosed, a literal '['.
        if (c === 0) return false
        const inverted = at(pat, p) === 0x21
        let q = p + (inverted ? 1 : 0)
        let a = at(pat, q++)
        let match = false
        let malformed = false
        do {
          let b = a
          if (a === 0) {
            malformed = true
            break
          }
          if (at(pat, q) === 0x2d && at(pat, q + 1) !== 0x5d) {
            b = at(pat, q + 1)
            if (b === 0) {
              malformed = true
              break
            }
            q += 2
          }
          if (a <= c && c <= b) match = true
          a = at(pat, q++)
        } while (a !== 0x5d)
        if (malformed) literal = true
        else if (match === inverted) {
          if (c === 0 || backPat < 0) return false
          p = backPat
          s = ++backStr
        } else p = q
        break
      }
      case 0x5c: // '\': the next character as it is
        d = at(pat, p++)
        literal = true
        break
      default:
        literal = true
    }
    if (!literal) continue
    if (c === d) {
      if (d === 0) return true
      continue
    }
    // Mismatch: try again from the last '*', one character later in str.
    if (c === 0 || backPat < 0) return false
    p = backPat
    s = ++backStr
  }
}

/**
 * Does str match? (regex_match_*: a probe's strings are __data_loc ones whose
 * length is known, so every type compares the whole string.)
 */
export function stringMatches(m: StringMatch, str: string): boolean {
  switch (m.type) {
    case 'full':
      return str === m.pattern
    case 'front':
      return str.startsWith(m.pattern)
    case 'middle':
      return str.includes(m.pattern)
    case 'end':
      return str.endsWith(m.pattern)
    case 'glob':
      return globMatch(m.pattern, str)
  }
}
