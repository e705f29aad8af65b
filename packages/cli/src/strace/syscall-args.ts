// How many arguments each x86-64 system call takes (strace's syscallent.h),
// for calls printed without decoding: strace then shows that many raw values.

// One digit per call number, 0-334 and 424-450.
const LOW =
  '33312223363214403443321505333333120221304333663323233455500314213341245332112232112212212322333122211403011002000222233331111222432223112223232231112221003215212101252214221323215435553303555444333222216331215331314453104434211222414432563541552345545320324434534345343365123644464632144244213214445525453214236653345332535133666421564'
const HIGH = '426435253322343456543421254'

/** The argument count, or undefined for a number with no system call. */
export function syscallArgCount(nr: number): number | undefined {
  if (nr >= 0 && nr < LOW.length) return Number(LOW[nr])
  if (nr >= 424 && nr < 424 + HIGH.length) return Number(HIGH[nr - 424])
  return undefined
}
