function searchFlights(args) {
  const { origin, destination, departure_date } = JSON.parse(args);
  return JSON.stringify({ flights: [{ origin, destination, departure_date, price: 120 }] });
}

module.exports = { searchFlights };
