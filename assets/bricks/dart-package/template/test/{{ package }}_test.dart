import 'package:{{ package }}/{{ package }}.dart';
import 'package:test/test.dart';

void main() {
  test('add', () {
    expect(add(2, 2), 4);
  });
}
