// perf's strglobmatch: the glob that `perf probe --funcs FILTER` takes -
// '*' any run of characters, '?' one, '[abc]' / '[a-z]' / '[!x]' a set,
// '\' quotes the next character; the whole name must match.

export function strglobmatch(name: string, glob: string): boolean {
  let re = '^'
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === '*') re += '.*'
    else if (c === '?') re += '.'
    else if (c === '\\' && i + 1 < glob.length) re += escapeChar(glob[++i])
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2)
      if (end < 0) {
        re += '\\['
        continue
      }
      let set = glob.slice(i + 1, end)
      if (set.startsWith('!')) set = `^${set.slice(1)}`
      re += `[${set.replace(/[\\\]]/g, '\\$&')}]`
      i = end
    } else re += escapeChar(c)
  }
  return new RegExp(`${re}$`).test(name)
}

function escapeChar(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
