module.exports.shout = (output) => String(output).toUpperCase();
