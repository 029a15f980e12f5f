module.exports = (output, context) => output.replace('long', 'LONG');
