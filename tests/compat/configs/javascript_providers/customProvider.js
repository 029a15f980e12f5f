// A provider written as promptfoo's custom provider examples are: a CommonJS class with a
// constructor taking options, id() and async callApi(prompt, context).
class CustomApiProvider {
  constructor(options) {
    // The caller may override the provider id (several instances of one provider).
    this.providerId = options.id || 'custom provider';
    // The config object holds the options the config file gives the provider.
    this.config = options.config;
  }

  id() {
    return this.providerId;
  }

  async callApi(prompt, context) {
    if (prompt.includes('!ERROR!')) {
      throw new Error('Forced error: ' + prompt);
    }
    const style = this.config?.style || 'plain';
    const city = context.vars.city || 'nowhere';
    const words = prompt.split(/\s+/).length;
    const output =
      style === 'shout' ? `THE WEATHER IN ${city.toUpperCase()} IS SUNNY` : `The weather in ${city} is sunny`;
    return {
      output,
      tokenUsage: { total: words + 6, prompt: words, completion: 6 },
      cost: 0.0001 * (words + 6),
    };
  }
}

module.exports = CustomApiProvider;
