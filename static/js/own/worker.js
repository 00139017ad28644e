/* The own-engine page's worker: Pyodide, the recorder and the student's code, off the page's
 * thread, so the page stays responsive; the page ends it after max_own_run_seconds.
 *
 * Pyodide comes from this origin (static/pyodide, put there by scripts/pyodide): never a CDN.
 * A cold start boots CPython (2–3 s); it then keeps a memory snapshot of the booted interpreter
 * in IndexedDB (Pyodide's `_makeSnapshot`/`_loadSnapshot`, of the pinned version), so the next
 * worker, after a run or a stopped loop, starts from it in a fraction of that.
 * Messages in: {type: "run", source, limits}. Out: {type: "ready", ms, warm}, then
 * {type: "result", json} for each run, or {type: "failed", message}.
 */
import { loadPyodide, version } from "../../pyodide/pyodide.mjs";

const INDEX = new URL("../../pyodide/", import.meta.url).href;
const DB = "gradtrace-own";
const KEY = "snapshot-" + version;

function db() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore("snapshots");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function readSnapshot() {
  try {
    const d = await db();
    return await new Promise((resolve) => {
      const req = d.transaction("snapshots").objectStore("snapshots").get(KEY);
      req.onsuccess = () => resolve(req.result || null);
      req.onerror = () => resolve(null);
    });
  } catch (e) {
    return null; // no IndexedDB (a private window): every start is cold
  }
}

async function writeSnapshot(bytes) {
  try {
    const d = await db();
    await new Promise((resolve) => {
      const tx = d.transaction("snapshots", "readwrite");
      tx.objectStore("snapshots").put(bytes, KEY);
      tx.oncomplete = resolve;
      tx.onerror = resolve;
    });
  } catch (e) { /* a snapshot is only a speed-up */ }
}

async function boot() {
  const t0 = performance.now();
  let py = null;
  let warm = false;
  const snapshot = await readSnapshot();
  if (snapshot) {
    try {
      py = await loadPyodide({ indexURL: INDEX, _loadSnapshot: snapshot });
      warm = true;
    } catch (e) {
      py = null;
    }
  }
  if (!py) {
    py = await loadPyodide({ indexURL: INDEX, _makeSnapshot: true });
    // Taken before any code runs; stored while this worker goes on (not waited for).
    try { writeSnapshot(py.makeMemorySnapshot()); } catch (e) { /* only a speed-up */ }
  }
  const recorder = await (await fetch(new URL("./recorder.py", import.meta.url))).text();
  py.runPython(recorder + "\n\nimport json as _json\n" +
    "def _record_json(source, limits):\n" +
    "    return _json.dumps(record(source, _json.loads(limits)), allow_nan=False)\n");
  return { py, ms: performance.now() - t0, warm };
}

const booted = boot();
booted.then(
  (b) => postMessage({ type: "ready", ms: b.ms, warm: b.warm, version }),
  (e) => postMessage({ type: "failed", message: String(e && e.message ? e.message : e) }),
);

onmessage = async (ev) => {
  const msg = ev.data || {};
  if (msg.type !== "run") return;
  const { py } = await booted;
  const t0 = performance.now();
  let json;
  try {
    json = py.globals.get("_record_json")(String(msg.source), JSON.stringify(msg.limits || {}));
  } catch (e) {
    postMessage({ type: "failed", message: String(e && e.message ? e.message : e) });
    return;
  }
  postMessage({ type: "result", json, ms: performance.now() - t0 });
};
