import { toDto } from '../common/dto/validation.pipe';
import { CreateSnippetDto } from './dto/snippet.dto';
import { checkFileName, checkRestrictedVisibility, snippetVisibility } from './snippet-rules';

const err = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { body(): unknown }).body();
  }
  throw new Error('no error');
};
const notIncluded = { message: { visibility_level: ['is not included in the list'] } };

describe('snippet rules', () => {
  it('visibility_level: 0/10/20, 1 and 2 as 10 and 20, numbers or digit strings; else a field map', () => {
    expect([0, 10, 20, 1, 2, '10', ' 20 ', ['0', '2']].map(snippetVisibility)).toEqual([0, 10, 20, 10, 20, 10, 20, 20]);
    for (const bad of [5, 'public', true, {}, -10, 1.5]) expect(err(() => snippetVisibility(bad))).toEqual(notIncluded);
  });

  it('restricted levels bind everyone but admins; file names are never blank nor over 255', () => {
    expect(err(() => checkRestrictedVisibility(false, 20, [20]))).toEqual({
      message: { visibility_level: ['Public visibility has been restricted by your GitLab administrator'] },
    });
    expect(() => checkRestrictedVisibility(true, 20, [20])).not.toThrow();
    expect(() => checkRestrictedVisibility(false, 10, null)).not.toThrow();
    expect(err(() => checkFileName(''))).toEqual({ message: { file_name: ["can't be blank"] } });
    expect(err(() => checkFileName('x'.repeat(256)))).toEqual({ message: { file_name: ['is too long (maximum is 255 characters)'] } });
    expect(() => checkFileName(undefined)).not.toThrow();
  });

  it('the create DTO keeps an empty level as null (the instance default) and an absent one absent', () => {
    const base = { title: 't', file_name: ' f.rb ', code: 'c' };
    expect(toDto(CreateSnippetDto, { ...base, visibility_level: '' }).visibility_level).toBeNull();
    expect(toDto(CreateSnippetDto, { ...base, visibility_level: null }).visibility_level).toBeNull();
    expect(toDto(CreateSnippetDto, base).visibility_level).toBeUndefined();
    expect(toDto(CreateSnippetDto, { ...base, visibility_level: 10 })).toMatchObject({ file_name: 'f.rb', visibility_level: 10 });
    expect(err(() => toDto(CreateSnippetDto, { title: 't', code: 'c' }))).toEqual({ message: '400 (Bad request) "file_name" not given' });
  });
});
