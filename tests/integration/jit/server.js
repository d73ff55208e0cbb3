// server.js: a small HTTP server whose requests spend their CPU time in
// JavaScript the JIT compiles (record_jit.sh).  Listens on 127.0.0.1, a
// port the kernel picks, printed as "port N" once listening.
'use strict';
const http = require('http');

function fib(n) {
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

function render(n) {
	let s = '';
	for (let i = 0; i < 200; i++)
		s += String.fromCharCode(97 + ((n + i) % 26));
	return s.split('').reverse().join('');
}

const server = http.createServer((req, res) => {
	const n = fib(24);
	res.end(render(n) + '\n');
});
server.listen(0, '127.0.0.1', () => {
	console.log('port ' + server.address().port);
});
