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
    // Over budget, or over it once (bytes dropped from the tail's front) before the end was taken off.
    return this.total > this.limitBytes || this.total > this.headBytes + this.tailBytes;
  }

  get totalBytes(): number {
    return this.total;
  }

  /**
   * The last `n` bytes of the stream, when they were all kept (the stream's end is always kept,
   * up to the tail's budget at least); null when fewer were kept.
   */
  lastBytes(n: number): Buffer | null {
    // The tail is always the stream's end; with nothing dropped, the head joins it.
    const kept = this.headBytes + this.tailBytes === this.total ? Buffer.concat([...this.head, ...this.tail]) : Buffer.concat(this.tail);
    return n <= kept.length ? kept.subarray(kept.length - n) : null;
  }

  /** Forgets the stream's last `n` bytes (all kept: see lastBytes), as if they had never been pushed. */
  dropLast(n: number): void {
    if (this.lastBytes(n) === null) throw new Error(`cannot drop ${n} bytes: fewer were kept`);
    let left = n;
    for (const side of [this.tail, this.head]) {
      while (left > 0 && side.length > 0) {
        const last = side[side.length - 1]!;
        const cut = Math.min(left, last.length);
        side[side.length - 1] = last.subarray(0, last.length - cut);
        if (side[side.length - 1]!.length === 0) side.pop();
        if (side === this.tail) this.tailBytes -= cut;
        else this.headBytes -= cut;
        left -= cut;
      }
    }
    this.total -= n;
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
