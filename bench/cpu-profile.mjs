// Preloaded with NODE_OPTIONS=--import (where --cpu-prof is not allowed): samples this process's
// CPU every 200 µs and writes a .cpuprofile (Chrome DevTools' format) to
// $GEARBOX_CPU_PROFILE_DIR when the process exits.
import { mkdirSync, writeFileSync } from "node:fs";
import inspector from "node:inspector";
import path from "node:path";
import process from "node:process";

const dir = process.env.GEARBOX_CPU_PROFILE_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 200 });
  session.post("Profiler.start");
  process.on("exit", () => {
    // A same-thread session answers synchronously, so this runs before the process is gone.
    session.post("Profiler.stop", (err, result) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `gearbox-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
