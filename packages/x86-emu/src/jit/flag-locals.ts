// The lazy-flag fields in JavaScript locals, inside a looping block that
// keeps its registers in locals too (block-compiler.ts): a cmp's seven
// stores to the Cpu and the jcc's loads become register moves V8 keeps in
// machine registers across iterations. Like the registers, the locals go
// back to the Cpu wherever anything else can look at the flags: before
// each return, around each closure call and helper that reads or writes
// them, and on a fault, in the catch.
//
// Deferred eager flags: a shift's or a 32-bit imul's flags are eager (CF
// and OF follow no lazy kind), and computing SF, ZF and PF every iteration
// is most of their cost when only a possible fault keeps them live. In
// locals they are recorded as a pseudo lazy kind (Template.pseudo: fop -2
// or -1, the result in fr/frh, CF|OF in fa), and runtime.sync makes them
// eager flags when the locals are stored.

const FIELDS = ['fop', 'fa', 'fah', 'fb', 'fbh', 'fr', 'frh', 'fcf'] as const
const FIELD = /\bc\.(fop|fah|fa|fbh|fb|frh|fr|fcf)\b/g
const LOCALS = FIELDS.map((f) => `F${f}`).join(',')
/** The flags to the Cpu (eager ones made from a pseudo kind): an expression giving the kind now in Cpu.fop. */
const SYNC = `rt.sync(c,${LOCALS})`

export interface FlagLocals {
  rename(code: string): string
  declare: string
  store: string
  reload: string
}

export const flagLocals: FlagLocals = {
  rename(code) {
    let out = code.replace(FIELD, (_m, f: string) => `F${f}`)
    // Helpers that read the flags from the Cpu get them stored first.
    out = out.replace(/\brt\.getCF\(c\)/g, `(Ffop=${SYNC},rt.getCF(c))`)
    out = out.replace(/\brt\.cond\(c,(\d+)\)/g, (_m, cc: string) => `(Ffop=${SYNC},rt.cond(c,${cc}))`)
    // imul64 records its flags in the Cpu: take them back.
    if (out.includes('rt.imul64(c,')) out += reloadFlags()
    return out
  },
  declare: `let ${FIELDS.map((f) => `F${f}=c.${f}`).join(',')};`,
  store: `Ffop=${SYNC};`,
  reload: reloadFlags(),
}

function reloadFlags(): string {
  return FIELDS.map((f) => `F${f}=c.${f};`).join('')
}
