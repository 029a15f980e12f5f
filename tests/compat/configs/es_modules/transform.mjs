export default (output, context) => output.toUpperCase() + " via " + context.vars.topic;
