class EchoProvider {
  constructor(options) { this.providerId = options.id || 'echo-js'; this.config = options.config || {}; }
  id() { return this.providerId; }
  async callApi(prompt) {
    if (prompt.includes('boom')) return { error: 'agent crashed: boom' };
    return { output: prompt, tokenUsage: { total: 10, prompt: 6, completion: 4 }, cost: 0.001 };
  }
}
module.exports = EchoProvider;
