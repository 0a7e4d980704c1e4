// The decorators below need the metadata API that Nest loads in the application (this unit imports no Nest).
import 'reflect-metadata';
import { ArrayMaxSize, IsDefined, IsNotEmpty, IsString, MaxLength, ValidateNested, validate } from 'class-validator';
import { Type } from 'class-transformer';
import { flattenValidationErrors } from './validation.js';

class Inner {
  @IsString({ message: 'code must be a string' }) code: unknown;
}

class Plain {
  @IsString({ message: 'label must be a string' }) label?: unknown;
  @IsString({ message: 'note must be a string' }) note?: unknown = null;
}

class Outer {
  @IsDefined({ message: 'name is required' })
  @IsString()
  @MaxLength(5, { message: 'name is too long' })
  name?: string;

  @IsNotEmpty({ message: 'title must not be empty' }) @MaxLength(3) title = '';

  @ValidateNested({ each: true }) @Type(() => Inner) items: Inner[] = [];
}

describe('flattenValidationErrors', () => {
  it('gives one message per field, the most basic rule first, nested fields as dotted paths', async () => {
    const outer = new Outer();
    const bad = new Inner();
    bad.code = 7;
    outer.items = [new Inner(), bad];
    outer.items[0]!.code = 'ok';
    const errors = flattenValidationErrors(await validate(outer));
    expect(errors).toEqual([
      { field: 'name', message: 'name is required' },
      { field: 'title', message: 'title must not be empty' },
      { field: 'items.1.code', message: 'code must be a string' },
    ]);
  });

  it('says "is required" for a field that is missing or null, whatever rule failed, and the rule for a wrong value', async () => {
    expect(flattenValidationErrors(await validate(new Plain()))).toEqual([
      { field: 'label', message: 'label is required' },
      { field: 'note', message: 'note is required' },
    ]);
    const wrong = Object.assign(new Plain(), { label: 7, note: 'ok' });
    expect(flattenValidationErrors(await validate(wrong))).toEqual([
      { field: 'label', message: 'label must be a string' },
    ]);
  });

  it('names the first item over a maximum count when the constraint says where (context.at)', async () => {
    class Buttons {
      @ArrayMaxSize(3, { message: 'at most 3 buttons', context: { at: 3 } }) buttons = [1, 2, 3, 4];
      @ArrayMaxSize(1, { message: 'at most 1 tag' }) tags = ['a', 'b'];
    }
    expect(flattenValidationErrors(await validate(new Buttons()))).toEqual([
      { field: 'buttons.3', message: 'at most 3 buttons' },
      { field: 'tags', message: 'at most 1 tag' },
    ]);
  });
});
