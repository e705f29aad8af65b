// A memory size as people write it for virtual machines (qemu -m, docker
// --memory): a whole number with an optional K, M or G suffix (binary:
// 1M is 1024 KiB; a trailing B or iB is allowed); no suffix means MiB.

import { CliError } from './cli-error.js'

const UNITS: Record<string, number> = { K: 1024, M: 1024 ** 2, G: 1024 ** 3 }

/** Bytes, a multiple of 4 KiB, from min to max; anything else is a CliError naming the option. */
export function parseSize(text: string, what: string, min: number, max: number): number {
  const m = /^([0-9]+)\s*([KMG])?(?:i?B)?$/i.exec(text.trim())
  const bytes = m ? Number(m[1]) * UNITS[(m[2] ?? 'M').toUpperCase()] : Number.NaN
  const show = (n: number) =>
    n % 1024 ** 3 === 0 ? `${n / 1024 ** 3}G` : n % 1024 ** 2 === 0 ? `${n / 1024 ** 2}M` : `${n / 1024}K`
  if (!Number.isSafeInteger(bytes) || bytes < min || bytes > max || bytes % 4096 !== 0)
    throw new CliError(
      `${what} must be a size from ${show(min)} to ${show(max)} such as 512M or 1G, in whole 4K pages (got '${text}')`,
    )
  return bytes
}
