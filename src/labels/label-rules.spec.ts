import { toDto } from '../common/dto/validation.pipe';
import { UpdateLabelDto } from './dto/label.dto';
import { checkLabel, checkLabelTitles, validLabelTitle } from './label-rules';

const err = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { body(): unknown }).body();
  }
  throw new Error('no error');
};

describe('label rules', () => {
  it('titles without & ? , and colours #RGB / #RRGGBB, as field maps', () => {
    expect(['bug', 'two words', 'x'.repeat(255)].every(validLabelTitle)).toBe(true);
    expect(['', 'a?b', 'a&b', 'a,b', 'x'.repeat(256)].some(validLabelTitle)).toBe(false);
    expect(() => checkLabel({ title: 'ok', color: '#FFF' })).not.toThrow();
    expect(err(() => checkLabel({ title: 'a?b', color: 'red' }))).toEqual({ message: { color: ['must be a valid color code'], title: ['is invalid'] } });
    expect(err(() => checkLabelTitles(['ok', 'a,b']))).toEqual({ message: { labels: { 'a,b': { title: ['is invalid'] } } } });
  });

  it('the update DTO trims names and requires name', () => {
    expect(toDto(UpdateLabelDto, { name: ' old ', new_name: ' new ' })).toEqual({ name: 'old', new_name: 'new' });
    expect(err(() => toDto(UpdateLabelDto, { new_name: 'x' }))).toEqual({ message: '400 (Bad request) "name" not given' });
  });
});
