// A transform module whose export is not a function.
module.exports = { upper: true };
