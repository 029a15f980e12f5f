// A provider class without callApi: promptfoo loads it and errors every row it serves.
module.exports = class Incomplete {
  id() {
    return 'incomplete';
  }
};
