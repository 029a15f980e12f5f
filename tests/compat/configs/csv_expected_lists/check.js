module.exports = (output) => output.length > 3;
