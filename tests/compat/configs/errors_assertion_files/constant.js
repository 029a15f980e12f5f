// Exports no function at all.
module.exports = { threshold: 3 };
