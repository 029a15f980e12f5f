module.exports = (output) => ({ pass: output.startsWith('apple'), score: 0.4, reason: 'cjs file' });
