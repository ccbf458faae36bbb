/**
 * A body read with an idle deadline: each chunk must come within `idleMs` of the one before (or
 * of the start), else the read fails with the deadline's error and the source is let go of.
 */
export async function* idleGuarded(source: AsyncIterable<Buffer>, idleMs: number, timeout: () => Error): AsyncGenerator<Buffer> {
  const it = source[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timeout()), idleMs);
      });
      const next = it.next();
      try {
        const step = await Promise.race([next, idle]);
        if (step.done) {
          finished = true;
          return;
        }
        yield step.value;
      } catch (err) {
        // The pending read settles once the source is destroyed below: nothing waits for it.
        next.catch(() => undefined);
        throw err;
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    if (!finished) await it.return?.();
  }
}
