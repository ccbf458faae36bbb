/**
 * A single-producer, single-consumer async queue with a byte count, used to pipeline STREAMED
 * body chunks: the producer sends each chunk to the processor as it arrives, the consumer forwards
 * them in order as their responses come back (Envoy's streaming chunk queue).
 */

/** Async FIFO of items; iterate it to consume. */
export class Channel<T> {
  private readonly items: T[] = [];
  private closed = false;
  private failure: Error | undefined;
  private wakeConsumer: (() => void) | undefined;
  private wakeProducer: (() => void) | undefined;
  /** Bytes of the items not yet consumed (as declared by `push`). */
  bytes = 0;

  push(item: T, bytes: number): void {
    this.items.push(item);
    this.bytes += bytes;
    this.notifyConsumer();
  }

  /** No more items will come. */
  close(): void {
    this.closed = true;
    this.notifyConsumer();
  }

  /** The producer failed: the consumer throws `error` once the queued items are consumed. */
  fail(error: Error): void {
    this.failure = error;
    this.close();
  }

  /** Resolves once the consumer takes an item (for flow control). */
  async taken(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.wakeProducer = resolve;
    });
  }

  /** Marks `bytes` of a consumed item as released. */
  release(bytes: number): void {
    this.bytes -= bytes;
    const wake = this.wakeProducer;
    this.wakeProducer = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.closed) {
        if (this.failure !== undefined) throw this.failure;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wakeConsumer = resolve;
      });
    }
  }

  private notifyConsumer(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = undefined;
    wake?.();
  }
}
