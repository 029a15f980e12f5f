// A default export and named ones: promptfoo takes the default export as the module, so
// the named exports are not found by name.
export default (output) => output.length > 0;
export const named = () => true;
