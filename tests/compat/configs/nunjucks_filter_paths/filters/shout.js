module.exports = (text) => String(text).toUpperCase() + "!";
