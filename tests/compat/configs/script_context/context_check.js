module.exports = (output, context) =>
  context.provider.id() === 'echo' &&
  context.test.description === 'files' &&
  context.test.assert.length === 3 &&
  'logProbs' in context;
