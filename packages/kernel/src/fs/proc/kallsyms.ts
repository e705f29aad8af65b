// /proc/kallsyms (kernel/kallsyms.c s_show): every symbol of the guest
// kernel in address order, "%px %c %s" - the address as 16 hex digits (as
// root sees it, kptr_restrict 0), the type letter (upper case: global),
// the name.

import { formatLinear } from '@probekit/x86-emu'
import type { Kallsyms } from '../../kallsyms.js'

export function showKallsyms(kallsyms: Kallsyms): string {
  let out = ''
  for (const s of kallsyms.all()) out += `${formatLinear(s.address).slice(2)} ${s.type} ${s.name}\n`
  return out
}
