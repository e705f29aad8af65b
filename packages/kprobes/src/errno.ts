// The negative errno values register_kprobe and friends return (Linux numbering).

export { E2BIG, EEXIST, EINVAL, ENOENT, ENOMEM } from '@probekit/kernel'

/** Illegal byte sequence: the address is not on an instruction boundary (can_probe). */
export const EILSEQ = 84
