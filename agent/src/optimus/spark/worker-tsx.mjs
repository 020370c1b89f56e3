// Starts the parallel Spark reader's worker (`worker.ts`) from the sources, through tsx: a checkout
// (tests, `npm start`) runs TypeScript; the installed agent runs the bundled `dist/optimus-worker.js`.
import { register } from "tsx/esm/api";

register();
await import("./worker.ts");
