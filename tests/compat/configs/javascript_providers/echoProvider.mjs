// An ES module provider as promptfoo's documentation writes one: a default-exported class
// whose id and callApi are arrow-function fields.
export default class EchoProvider {
  id = () => 'echo-esm';

  callApi = async (prompt, context, options) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return {
      output: `Echo: ${prompt}`,
      metadata: { repeat: context.repeatIndex },
    };
  };
}
