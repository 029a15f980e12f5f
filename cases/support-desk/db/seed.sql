-- The support desk's world: every run starts from a fresh database built by this script.
CREATE TABLE customers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL
);
CREATE TABLE orders (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(id),
    item TEXT NOT NULL,
    amount REAL NOT NULL,
    status TEXT NOT NULL,          -- shipped, delivered, refunded, partially_refunded
    delivered_on TEXT
);
CREATE TABLE refunds (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders(id),
    amount REAL NOT NULL
);
CREATE TABLE tickets (
    id TEXT PRIMARY KEY,
    reason TEXT NOT NULL
);

INSERT INTO customers VALUES
    ('C1', 'Ana Ruiz', 'ana@example.com'),
    ('C2', 'Ben Okafor', 'ben@example.com'),
    ('C3', 'Cleo Martin', 'cleo@example.com'),
    ('C4', 'Dan Weiss', 'dan@example.com');

INSERT INTO orders VALUES
    ('A100', 'C1', 'desk lamp', 40.0, 'delivered', '2024-05-02'),
    ('A101', 'C1', 'headphones', 89.9, 'delivered', '2024-05-03'),
    ('A102', 'C2', 'coffee grinder', 55.0, 'delivered', '2024-05-06'),
    ('A103', 'C2', 'kettle', 30.0, 'refunded', '2024-04-20'),
    ('A104', 'C3', 'office chair', 149.0, 'shipped', NULL),
    ('A105', 'C3', 'monitor', 210.0, 'delivered', '2024-05-01'),
    ('A106', 'C4', 'keyboard', 65.0, 'delivered', '2024-05-08');

INSERT INTO refunds VALUES ('R-001', 'A103', 30.0);
