/**
 * Keeps the head and the tail of a stream within a byte budget, counting what was dropped, so a
 * script printing 100 MB costs a fixed amount of memory and still shows how it began and ended.
 */
export class BoundedOutput {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;

  constructor(private readonly limitBytes: number) {}

  private get headLimit(): number {
    return Math.floor(this.limitBytes / 2);
  }

  private get tailLimit(): number {
    return this.limitBytes - this.headLimit;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(chunk.length, this.headLimit - this.headBytes);
      this.head.push(chunk.subarray(0, take));
      this.headBytes += take;
      chunk = chunk.subarray(take);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    // Drop whole chunks from the front while the rest still fills the tail budget.
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= this.tailLimit) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  get truncated(): boolean {
    return this.total > this.limitBytes;
  }

  get totalBytes(): number {
    return this.total;
  }

  /** Every byte, when nothing was cut; null otherwise. */
  bytes(): Buffer | null {
    return this.truncated ? null : Buffer.concat([...this.head, ...this.tail]);
  }

  toString(): string {
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    if (!this.truncated) return Buffer.concat([head, tail]).toString('utf8');
    tail = tail.subarray(tail.length - this.tailLimit);
    const dropped = this.total - head.length - tail.length;
    // Cut on line boundaries where possible, so no half line (or half UTF-8 character) is shown.
    const headText = trimToLastNewline(head.toString('utf8'));
    const tailText = trimToFirstNewline(tail.toString('utf8'));
    return `${headText}\n[... ${dropped} bytes of output cut (${this.total} in total) ...]\n${tailText}`;
  }
}

function trimToLastNewline(text: string): string {
  const i = text.lastIndexOf('\n');
  return i > text.length / 2 ? text.slice(0, i) : text.replace(/\uFFFD+$/, '');
}

function trimToFirstNewline(text: string): string {
  const i = text.indexOf('\n');
  return i >= 0 && i < text.length / 2 ? text.slice(i + 1) : text.replace(/^\uFFFD+/, '');
}
