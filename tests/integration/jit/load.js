// load.js PORT N: N requests to the server, one at a time (record_jit.sh);
// prints "done N" when all were answered.
'use strict';
const http = require('http');
const port = Number(process.argv[2]), total = Number(process.argv[3]);
let done = 0;

function one() {
	http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
		res.resume();
		res.on('end', () => {
			if (++done === total)
				console.log('done ' + done);
			else
				one();
		});
	}).on('error', (e) => {
		console.error('load: ' + e.message);
		process.exit(1);
	});
}
one();
