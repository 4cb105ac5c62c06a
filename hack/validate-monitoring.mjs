// Validates the prometheus-operator objects (ServiceMonitor, PrometheusRule) among the objects of
// a JSON array file against the kinds' published schemas; prints one line per object and exits 1
// when one fails. SCHEMA_TOOLS_NODE_MODULES is the node_modules of hack/schema-tools.sh.
//   node hack/validate-monitoring.mjs OBJECTS.json
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.SCHEMA_TOOLS_NODE_MODULES;
const kinds = await import(pathToFileURL(path.join(modules,
  '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/index.js')).href);
const objects = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let checked = 0;
for (const object of objects) {
  if (object.apiVersion !== 'monitoring.coreos.com/v1') continue;
  const Kind = kinds[object.kind];
  if (!Kind) {
    console.log(`FAIL ${object.kind}/${object.metadata.name}: no schema for this kind`);
    process.exitCode = 1;
    continue;
  }
  try {
    new Kind(object).validate();
    console.log(`ok ${object.kind}/${object.metadata.name}`);
  } catch (e) {
    console.log(`FAIL ${object.kind}/${object.metadata.name}: ${e.message}`);
    process.exitCode = 1;
  }
  checked++;
}
console.log(`${checked} monitoring objects checked`);
