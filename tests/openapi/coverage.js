// Every (path, method, status) that api/openapi.yaml documents must be
// exercised by a `req <status> <token> <METHOD> <path>` line (or `refused
// <status> <problem> <field> <token> <METHOD> <path>`) of the guest API and
// tenant tests; and every such line must be documented. Prints what is
// missing.
// Usage: node coverage.js <openapi.yaml> <test file>...
'use strict';
const fs = require('fs');
const YAML = require('yaml');

const [spec, ...tests] = process.argv.slice(2);
const doc = YAML.parse(fs.readFileSync(spec, 'utf8'));
const methods = ['get', 'put', 'post', 'delete', 'patch'];
const documented = [];
for (const [path, item] of Object.entries(doc.paths)) {
	const re = new RegExp('^' + path.replace(/\{[^}]+\}/g, '[a-z0-9.-]+') + '$');
	for (const m of methods) {
		if (!item[m])
			continue;
		for (const status of Object.keys(item[m].responses))
			documented.push({ path, re, method: m.toUpperCase(), status, seen: false });
	}
}
const line = /\b(?:req|refused) (\d{3}) (?:\S+ \S+ )?\S+ ([A-Z]+) "?([^ "?]+)/;
let undocumented = 0;
for (const file of tests) {
	for (const text of fs.readFileSync(file, 'utf8').split('\n')) {
		const m = line.exec(text);
		if (!m)
			continue;
		const [, status, method, path] = m;
		const known = documented.filter((d) => d.re.test(path));
		const hit = known.filter((d) => d.method === method && d.status === status);
		hit.forEach((d) => { d.seen = true; });
		// 401, 404 for unknown paths and 405 are answered for any path
		if (!hit.length && !['401', '404', '405'].includes(status)) {
			console.log(`undocumented: ${method} ${path} -> ${status} (${file})`);
			undocumented++;
		}
	}
}
const missing = documented.filter((d) => !d.seen);
for (const d of missing)
	console.log(`not exercised: ${d.method} ${d.path} -> ${d.status}`);
console.log(`${documented.length - missing.length} of ${documented.length} documented answers exercised`);
process.exit(missing.length || undocumented ? 1 : 0);
