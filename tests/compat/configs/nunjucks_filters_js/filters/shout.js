module.exports = function (text) {
  return String(text).toUpperCase() + '!';
};
