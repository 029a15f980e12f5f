// A check that throws: promptfoo lets the error through, and the row is an error row.
module.exports = (output, context) => {
  throw new Error(`cannot grade ${output}`);
};
