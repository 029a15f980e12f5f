module.exports = (output, context) => output.split('').reverse().join('');
module.exports.wrap = (output, context) => `<${output}>(${context.vars.k})`;
