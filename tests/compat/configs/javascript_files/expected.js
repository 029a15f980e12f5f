module.exports = (output, context) => context.vars.q.replace('long', 'LONG');
