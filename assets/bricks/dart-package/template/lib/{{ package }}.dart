/// Adds two numbers.
int add(int left, int right) => left + right;
