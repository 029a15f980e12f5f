module.exports = (output, context) => output.split(' ').reverse().join(' ');
module.exports.count = (output) => output.length;
