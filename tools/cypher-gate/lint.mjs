// The Neo4j dialect gate: lints every statement graphmem sends to Neo4j with Neo4j's own parser and
// semantic analysis (@neo4j-cypher/language-support, pinned in package.json), as Cypher 5, against the
// package's procedure/function registry (testData.mockSchema: db.index.vector.queryNodes and friends).
//
// Input: a JSON array of {name, source, text} on stdin or in the file named by argv[2]
// (`graphmem cypher-statements` prints it). Exit 1 on any error-level diagnostic, 2 on bad input.
import { readFileSync } from 'node:fs';
import { lintCypherQuery, isNotParamError, testData } from '@neo4j-cypher/language-support';

const ERROR = 1; // DiagnosticSeverity.Error

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

const schema = { ...testData.mockSchema, defaultLanguage: 'CYPHER 5' };
let failures = 0;
for (const { name, source, text } of statements) {
  const { diagnostics } = lintCypherQuery(text, schema);
  const errors = diagnostics.filter((d) => d.severity === ERROR && isNotParamError(d));
  for (const d of errors) {
    const line = text.slice(0, d.offsets.start).split('\n').length;
    console.error(`${source}: ${name}: line ${line}: ${d.message}`);
  }
  if (errors.length > 0) failures += 1;
}
console.log(`cypher gate: ${statements.length} statements checked as Neo4j Cypher 5, ${failures} failed`);
process.exit(failures > 0 ? 1 : 0);
