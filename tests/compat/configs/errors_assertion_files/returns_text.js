// Returns neither a boolean, a number nor a grading result: a failed check.
module.exports = () => "looks fine to me";
