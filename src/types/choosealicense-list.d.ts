declare module '@rexxars/choosealicense-list';
