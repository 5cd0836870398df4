// The Neo4j dialect gate: lints every statement graphmem sends to Neo4j with Neo4j's own parser and
// semantic analysis (@neo4j-cypher/language-support, pinned in package.json), as Cypher 5, against the
// package's procedure/function registry (testData.mockSchema: db.index.vector.queryNodes and friends).
//
// Input: a JSON array of {name, source, text} on stdin or in the file named by argv[2]
// (`python -m graphmem.store.dump neo4j` prints it). Exit 1 on any error-level diagnostic, 2 on bad input.
//
// The analysis costs about 0.2 s a statement on one core (35 s for graphmem's 183), so a long input is
// shared with worker threads, one per further core: this thread lints every n-th statement from 0, worker k
// every n-th from k. A worker loads the package again (about 1 s), so short inputs stay on this thread.
// Errors are printed in the input's order whatever thread found them.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { lintCypherQuery, isNotParamError, testData } from '@neo4j-cypher/language-support';

const ERROR = 1; // DiagnosticSeverity.Error
const PER_WORKER = 16; // statements a worker must get to be worth its start-up (about 1 s)

const schema = { ...testData.mockSchema, defaultLanguage: 'CYPHER 5' };

/** The error lines of statements[start], statements[start + step], ...: [[index, [line, ...]], ...]. */
function lintEvery(statements, start, step) {
  const found = [];
  for (let index = start; index < statements.length; index += step) {
    const { name, source, text } = statements[index];
    const { diagnostics } = lintCypherQuery(text, schema);
    const errors = diagnostics.filter((d) => d.severity === ERROR && isNotParamError(d));
    const lines = errors.map((d) => {
      const line = text.slice(0, d.offsets.start).split('\n').length;
      return `${source}: ${name}: line ${line}: ${d.message}`;
    });
    found.push([index, lines]);
  }
  return found;
}

if (!isMainThread) {
  const { statements, start, step } = workerData;
  parentPort.postMessage(lintEvery(statements, start, step));
} else {
  const input = readFileSync(process.argv[2] ?? 0, 'utf8');
  let statements;
  try {
    statements = JSON.parse(input);
  } catch (error) {
    console.error(`cypher gate: input is not JSON: ${error.message}`);
    process.exit(2);
  }
  if (!Array.isArray(statements) || statements.length === 0) {
    console.error('cypher gate: no statements to check');
    process.exit(2);
  }

  const step = Math.max(1, Math.min(availableParallelism(), Math.floor(statements.length / PER_WORKER)));
  const workers = [];
  for (let start = 1; start < step; start += 1) {
    workers.push(new Promise((resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: { statements, start, step } });
      worker.once('message', resolve);
      worker.once('error', reject);
    }));
  }
  const results = [lintEvery(statements, 0, step), ...(await Promise.all(workers))].flat();
  results.sort((a, b) => a[0] - b[0]);
  let failures = 0;
  for (const [, lines] of results) {
    for (const line of lines) console.error(line);
    if (lines.length > 0) failures += 1;
  }
  console.log(`cypher gate: ${statements.length} statements checked as Neo4j Cypher 5, ${failures} failed`);
  process.exit(failures > 0 ? 1 : 0);
}
