module.exports = { grade: (output) => ({ pass: true, score: 0.5, reason: "cjs named" }) };
