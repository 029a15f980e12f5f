module.exports = (output, context) => output.length > 3;
