// An async check whose promise rejects.
module.exports = async (output) => {
  await Promise.resolve();
  throw new TypeError("rejected " + output.length);
};
