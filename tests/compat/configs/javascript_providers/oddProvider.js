// A provider that answers in every shape a provider may get wrong: nothing, a bare
// string, an error field, an object output, a response without output.
module.exports = class OddProvider {
  id() {
    return 'odd';
  }

  async callApi(prompt, context) {
    switch (context.vars.shape) {
      case 'undefined':
        return undefined;
      case 'null':
        return null;
      case 'string':
        return 'just text';
      case 'error':
        return { error: 'upstream refused the request' };
      case 'object':
        return { output: { city: context.vars.city, sunny: true } };
      case 'empty':
        return { tokenUsage: { total: 1 } };
      default:
        return { output: `odd answer about ${context.vars.city}` };
    }
  }
};
