// Named checks: one exists, the other is looked up by a name the file lacks.
module.exports.isShort = (output) => output.length < 40;
module.exports.mentionsTopic = (output, context) => output.includes(context.vars.topic);
