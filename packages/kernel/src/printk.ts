// The printk ring buffer, readable as dmesg.

export interface LogRecord {
  jiffies: number
  text: string
}

export class Printk {
  private readonly records: LogRecord[] = []
  constructor(readonly capacity = 4096) {}

  log(jiffies: number, text: string): void {
    for (const line of text.replace(/\n$/, '').split('\n')) {
      this.records.push({ jiffies, text: line })
      if (this.records.length > this.capacity) this.records.shift()
    }
  }

  /** dmesg: "[    0.000000] text" lines (HZ = 100). */
  text(): string {
    return this.records.map((r) => `[${(r.jiffies / 100).toFixed(6).padStart(12)}] ${r.text}`).join('\n')
  }

  get lines(): readonly LogRecord[] {
    return this.records
  }
}
