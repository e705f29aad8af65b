// probekit run -f EVENT:FILTER: an ftrace event filter (Documentation/trace/
// events.rst, "Event filtering") on a probe's event, as writing FILTER to
// tracefs's events/GROUP/EVENT/filter sets it. EVENT is the event's name, or
// GROUP/EVENT; FILTER names the event's fields (its fetch arguments,
// __probe_ip or __probe_func and __probe_ret_ip, and every event's comm,
// common_pid, cpu, ...). A hit whose filter does not match is not written,
// as Linux discards it at commit; kprobe_profile counts it all the same.

import {
  type EventFilter,
  FilterError,
  type Kallsyms,
  type ProbeDefinition,
  parseEventFilter,
  probeEventFields,
} from '@probekit/kernel'
import { CliError } from './cli-error.js'
import { guestKernelSymbols } from './probes.js'

/** An event's filter, and the event's id (its common_type: 1, 2, ... in definition order). */
export interface ArmedFilter {
  filter: EventFilter
  eventType: number
}

/** Filters by GRP/EVENT (eventKey). */
export type EventFilters = ReadonlyMap<string, ArmedFilter>

/** The one event EVENT or GROUP/EVENT names among the definitions, or a CliError naming it. */
function findEvent(spec: string, name: string, defs: readonly ProbeDefinition[]): number {
  const slash = name.indexOf('/')
  const found = defs.flatMap((d, i) =>
    (slash < 0 ? d.event === name : `${d.group}/${d.event}` === name) ? [i] : [],
  )
  if (found.length === 1) return found[0]
  if (found.length > 1)
    throw new CliError(
      `-f '${spec}': ${name} is an event of ${found.length} groups (${found.map((i) => `${defs[i].group}/${defs[i].event}`).join(', ')}): name one as GROUP/EVENT`,
    )
  const events = defs.map((d) => `${d.group}/${d.event}`).join(', ')
  throw new CliError(`-f '${spec}': no probe event ${name} (the events are ${events})`)
}

/**
 * Parse every -f EVENT:FILTER against its event's fields, so a typo stops the
 * run before anything starts: a one-line error with tracefs's parse_error text
 * and the column of its caret in FILTER. FIELD.function finds functions in
 * kallsyms (default: the guest kernel's).
 */
export function parseEventFilters(
  specs: readonly string[],
  defs: readonly ProbeDefinition[],
  kallsyms?: Kallsyms,
): Map<string, ArmedFilter> {
  const out = new Map<string, ArmedFilter & { spec: string }>()
  if (specs.length > 0 && defs.length === 0)
    throw new CliError(`-f '${specs[0]}': there are no probes (-p, -P) to filter`)
  for (const spec of specs) {
    const colon = spec.indexOf(':')
    if (colon <= 0)
      throw new CliError(
        `-f '${spec}': expected EVENT:FILTER (EVENT a probe's event name or GROUP/EVENT), e.g. -f 'myprobe:dfd == -100'`,
      )
    const name = spec.slice(0, colon)
    const text = spec.slice(colon + 1)
    const index = findEvent(spec, name, defs)
    const d = defs[index]
    const key = `${d.group}/${d.event}`
    const before = out.get(key)
    if (before)
      throw new CliError(
        `-f '${spec}': event ${key} already has a filter (-f '${before.spec}'); join the two with &&`,
      )
    let filter: EventFilter
    try {
      filter = parseEventFilter(text, probeEventFields(d), { kallsyms: kallsyms ?? guestKernelSymbols() })
    } catch (e) {
      if (!(e instanceof FilterError)) throw e
      throw new CliError(
        `bad filter for ${key} '${text}': ${e.message} (column ${e.position + 1})${e.detail ? `: ${e.detail}` : ''}`,
      )
    }
    out.set(key, { filter, eventType: index + 1, spec })
  }
  return new Map([...out].map(([k, { filter, eventType }]) => [k, { filter, eventType }]))
}
